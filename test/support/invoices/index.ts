import type { Language } from "./languages.ts";
import { type InvoiceData, type InvoiceTruth, LAYOUTS, type LayoutName } from "./layouts.ts";
import { type InvoiceFormat, renderInvoice } from "./render.ts";

/** One invoice of the extraction set: its file and what an extraction must find in it. */
export interface GeneratedInvoice {
  /** "twoColumnHeader-de-pdf": its layout, language and format. */
  name: string;
  format: InvoiceFormat;
  bytes: Buffer;
  truth: InvoiceTruth;
}

const SUPPLIERS = ["ACME Supplies GmbH", "Globex Europe B.V.", "Initech S.A.S.", "Umbrella Ibérica S.L.", "Stark Forniture S.r.l.", "Wayne Industrial Ltd"];
const CUSTOMERS = [
  "Northwind Traders Ltd",
  "Nordwind Handel AG",
  "Contoso Distribution SARL",
  "Fabrikam Comercial S.A.",
  "Tailspin Logistica S.p.A.",
  "Adventure Works B.V.",
];
const STREETS = ["Hauptstraße 1", "4 Harbour Road", "12 rue de la Paix", "Calle Mayor 8", "Via Roma 21", "Damrak 70"];
const CITIES = ["10115 Berlin", "Bristol BS1 4DJ", "75002 Paris", "28013 Madrid", "00184 Roma", "1012 LM Amsterdam"];
const BANKS = ["Commerzbank", "Barclays", "BNP Paribas", "Banco Santander", "Intesa Sanpaolo", "ING Bank"];
const IBANS = [
  "DE89 3704 0044 0532 0130 00",
  "GB29 NWBK 6016 1331 9268 19",
  "FR14 2004 1010 0505 0001 3M02 606",
  "ES91 2100 0418 4502 0005 1332",
  "IT60 X054 2811 1010 0000 0123 456",
  "NL91 ABNA 0417 1643 00",
];
const DESCRIPTIONS = ["Consulting", "Travel", "Licence", "Support", "Training", "Hardware"];
const LANGUAGES: Language[] = ["en", "de", "fr", "es", "it", "nl"];
const FORMATS: InvoiceFormat[] = ["pdf", "docx", "txt", "html"];
/** Standard VAT rates by language; English invoices alternate a UK rate and a US sales tax rate. */
const RATES: Record<Language, number[]> = { en: [20, 8.25], de: [19, 7], fr: [20, 5.5], es: [21, 10], it: [22, 10], nl: [21, 9] };

const round = (amount: number) => Math.round(amount * 100) / 100;

function isoDate(day: number, month: number): string {
  return `2026-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** The `index`th invoice's data in `language`: varied names, dates, amounts, rates; every fifth VAT-exempt, every seventh a credit note. */
function invoiceData(index: number, language: Language, us: boolean): InvoiceData {
  const pick = <T>(list: readonly T[], shift = 0) => list[(index + shift) % list.length]!;
  const credit = index % 7 === 3;
  const exempt = index % 5 === 2;
  const rate = us ? 8.25 : pick(RATES[language].filter((value) => value !== 8.25));
  const items = Array.from({ length: 2 + (index % 3) }, (_, item) => ({
    description: pick(DESCRIPTIONS, item),
    quantity: 1 + ((index + item) % 4),
    price: round(95.5 + ((index * 37 + item * 113) % 900) + (item % 2) * 0.25),
  }));
  const net = round(items.reduce((sum, item) => sum + item.price * item.quantity, 0));
  const vat = exempt ? 0 : round((net * rate) / 100);
  const sign = credit ? -1 : 1;
  const currency = language === "en" ? (us ? "USD" : "GBP") : "EUR";
  const day = 1 + (index % 27);
  const month = 1 + (index % 11);
  const prefix = credit ? "CN" : "INV";
  return {
    truth: {
      number: `${prefix}-2026-${String(1000 + index * 7).padStart(5, "0")}`,
      date: isoDate(day, month),
      due: isoDate(day, month + 1),
      po: `PO-${88000 + index * 13}`,
      supplier: pick(SUPPLIERS),
      customer: pick(CUSTOMERS, 2),
      total: { amount: round(sign * (net + vat)), currency },
      ...(exempt ? {} : { vat: { amount: round(sign * vat), currency } }),
      iban: pick(IBANS, 1),
    },
    language,
    credit,
    rate,
    net,
    items,
    street: pick(STREETS),
    city: pick(CITIES),
    customerAddress: [pick(STREETS, 3), pick(CITIES, 3)],
    bankName: pick(BANKS, 1),
  };
}

/**
 * The extraction set: every layout in every format, in languages taken in turn (the US layout in
 * English), plain-text column blocks set with tabs in every other text file. 7 layouts x 4
 * formats x 3 turns = 84 invoices.
 */
export async function invoiceSet(): Promise<GeneratedInvoice[]> {
  const invoices: GeneratedInvoice[] = [];
  let index = 0;
  for (let turn = 0; turn < 3; turn++) {
    for (const [layoutName, layout] of Object.entries(LAYOUTS) as [LayoutName, (typeof LAYOUTS)[LayoutName]][]) {
      for (const format of FORMATS) {
        const us = layoutName === "usLayout";
        const language = us ? "en" : LANGUAGES[index % LANGUAGES.length]!;
        const data = invoiceData(index, language, us);
        const bytes = await renderInvoice(layout(data), format, { tabs: index % 2 === 0 });
        invoices.push({ name: `${layoutName}-${language}-${format}-${index}`, format, bytes, truth: data.truth });
        index++;
      }
    }
  }
  return invoices;
}
