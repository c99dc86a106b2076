/** The languages the generated invoices are written in. */
export type Language = "en" | "de" | "fr" | "es" | "it" | "nl";

/** An invoice's words in one language: its labels (as the document writes them) and other text. */
export interface Wording {
  invoice: string;
  creditNote: string;
  number: string;
  creditNumber: string;
  date: string;
  due: string;
  po: string;
  supplier: string;
  /** The supplier's label in a letterhead's footer. */
  company: string;
  customer: string;
  /** A customer's reference number: a label that holds the customer's label as a word, never the customer. */
  customerId: string;
  net: string;
  vat: string;
  total: string;
  /** The line items' column headers; the last heads a column of amounts. */
  items: [string, string, string, string];
  /** A VAT-exempt note: a rate's article number in it is no amount. */
  exempt: string;
  /** The supplier's VAT registration number's label: its digits are no amount. */
  vatId: string;
  bank: string;
  page: string;
}

export const WORDING: Record<Language, Wording> = {
  en: {
    invoice: "INVOICE",
    creditNote: "CREDIT NOTE",
    number: "Invoice No.",
    creditNumber: "Credit note No.",
    date: "Invoice date",
    due: "Due date",
    po: "PO number",
    supplier: "Supplier",
    company: "Company",
    customer: "Bill to",
    customerId: "Customer ID",
    net: "Subtotal",
    vat: "VAT",
    total: "Total",
    items: ["Description", "Qty", "Unit price", "Total"],
    exempt: "VAT exempt under Article 262 ter of the VAT Directive",
    vatId: "VAT Reg. No.",
    bank: "Bank",
    page: "Page",
  },
  de: {
    invoice: "RECHNUNG",
    creditNote: "GUTSCHRIFT",
    number: "Rechnungsnummer",
    creditNumber: "Gutschrift-Nr.",
    date: "Rechnungsdatum",
    due: "Zahlbar bis",
    po: "Ihre Bestellung",
    supplier: "Lieferant",
    company: "Firma",
    customer: "Rechnungsempfänger",
    customerId: "Kundennummer",
    net: "Nettobetrag",
    vat: "MwSt.",
    total: "Gesamtbetrag",
    items: ["Bezeichnung", "Menge", "Einzelpreis", "Gesamt"],
    exempt: "Steuerfreie innergemeinschaftliche Lieferung nach § 4 Nr. 1b UStG",
    vatId: "USt-IdNr.",
    bank: "Bank",
    page: "Seite",
  },
  fr: {
    invoice: "FACTURE",
    creditNote: "AVOIR",
    number: "Facture n°",
    creditNumber: "Avoir n°",
    date: "Date de facture",
    due: "Date d'échéance",
    po: "Bon de commande",
    supplier: "Fournisseur",
    company: "Société",
    customer: "Client",
    customerId: "Numéro client",
    net: "Total HT",
    vat: "TVA",
    total: "Total TTC",
    items: ["Désignation", "Quantité", "Prix unitaire", "Montant"],
    exempt: "Exonération de TVA, article 262 ter, I du CGI",
    vatId: "N° TVA intracom.",
    bank: "Banque",
    page: "Page",
  },
  es: {
    invoice: "FACTURA",
    creditNote: "FACTURA RECTIFICATIVA",
    number: "Número de factura",
    creditNumber: "Factura rectificativa n.º",
    date: "Fecha de factura",
    due: "Fecha de vencimiento",
    po: "Número de pedido",
    supplier: "Proveedor",
    company: "Empresa",
    customer: "Cliente",
    customerId: "N.º de cliente",
    net: "Base imponible",
    vat: "IVA",
    total: "Importe total",
    items: ["Concepto", "Cantidad", "Precio", "Importe"],
    exempt: "Operación exenta de IVA, artículo 25 de la Ley 37/1992",
    vatId: "NIF",
    bank: "Banco",
    page: "Página",
  },
  it: {
    invoice: "FATTURA",
    creditNote: "NOTA DI CREDITO",
    number: "Numero fattura",
    creditNumber: "Nota di credito n.",
    date: "Data fattura",
    due: "Data di scadenza",
    po: "Numero ordine",
    supplier: "Fornitore",
    company: "Ditta",
    customer: "Cliente",
    customerId: "Codice cliente",
    net: "Imponibile",
    vat: "IVA",
    total: "Totale fattura",
    items: ["Descrizione", "Quantità", "Prezzo", "Totale"],
    exempt: "Operazione non imponibile ai sensi dell'art. 8 DPR 633/72",
    vatId: "Partita IVA",
    bank: "Banca",
    page: "Pagina",
  },
  nl: {
    invoice: "FACTUUR",
    creditNote: "CREDITNOTA",
    number: "Factuurnummer",
    creditNumber: "Creditnotanummer",
    date: "Factuurdatum",
    due: "Vervaldatum",
    po: "Inkoopordernummer",
    supplier: "Leverancier",
    company: "Bedrijf",
    customer: "Klant",
    customerId: "Klantnummer",
    net: "Subtotaal",
    vat: "BTW",
    total: "Totaal",
    items: ["Omschrijving", "Aantal", "Prijs", "Bedrag"],
    exempt: "Btw verlegd, artikel 12 lid 3 Wet OB",
    vatId: "Btw-nummer",
    bank: "Bank",
    page: "Pagina",
  },
};

const MONTHS_EN = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTHS_LONG_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** Month names as each language writes them in a long date. */
const MONTHS_LONG: Record<Exclude<Language, "en">, string[]> = {
  de: ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"],
  fr: ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"],
  es: ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"],
  it: ["gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"],
  nl: ["januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober", "november", "december"],
};

/** An ISO date with its month's name, as the language writes it: "3. November 2026", "3 de noviembre de 2026". */
export function writeLongDate(iso: string, language: Language): string {
  const [year, month, day] = iso.split("-").map(Number) as [number, number, number];
  if (language === "en") return `${day} ${MONTHS_LONG_EN[month - 1]} ${year}`;
  const name = MONTHS_LONG[language][month - 1];
  if (language === "de") return `${day}. ${name} ${year}`;
  if (language === "es") return `${day} de ${name} de ${year}`;
  return `${day} ${name} ${year}`;
}

/** An ISO date as the language writes it (`us`: "November 3, 2026"). */
export function writeDate(iso: string, language: Language, us: boolean): string {
  const [year, month, day] = iso.split("-").map(Number) as [number, number, number];
  const dd = String(day).padStart(2, "0");
  const mm = String(month).padStart(2, "0");
  if (language === "en") return us ? `${MONTHS_LONG_EN[month - 1]} ${day}, ${year}` : `${day} ${MONTHS_EN[month - 1]} ${year}`;
  if (language === "de") return `${dd}.${mm}.${year}`;
  if (language === "nl") return `${dd}-${mm}-${year}`;
  return `${dd}/${mm}/${year}`;
}

const SIGNS: Record<string, string> = { EUR: "€", USD: "$", GBP: "£" };

/** An amount as the language writes it, with its currency sign ("1.334,56 €", "$1,334.56", "-£12.00"). */
export function writeMoney(amount: number, currency: string, language: Language): string {
  const negative = amount < 0;
  const [integer, fraction] = Math.abs(amount).toFixed(2).split(".") as [string, string];
  const sign = SIGNS[currency]!;
  const group = (separator: string) => integer.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
  const minus = negative ? "-" : "";
  if (language === "en") return `${minus}${sign}${group(",")}.${fraction}`;
  if (language === "fr") return `${minus}${group(" ")},${fraction} ${sign}`;
  if (language === "it" || language === "nl") return `${sign} ${minus}${group(".")},${fraction}`;
  return `${minus}${group(".")},${fraction} ${sign}`;
}

/** A rate as the language writes it: "20 %", "20%", "8.25%". */
export function writeRate(rate: number, language: Language): string {
  const written = language === "en" ? String(rate) : String(rate).replace(".", ",");
  return language === "fr" || language === "de" ? `${written} %` : `${written}%`;
}
