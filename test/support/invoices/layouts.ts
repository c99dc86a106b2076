import { type Language, WORDING, writeDate, writeLongDate, writeMoney, writeRate } from "./languages.ts";

/** What an invoice says: the values an extraction must find. */
export interface InvoiceTruth {
  number: string;
  date: string;
  due: string;
  po: string;
  supplier: string;
  customer: string;
  total: { amount: number; currency: string };
  /** None on a VAT-exempt invoice. */
  vat?: { amount: number; currency: string };
  iban: string;
}

/** A part of an invoice's body: lines of text, a grid set in columns (a table when ruled; a cell may hold lines), or a page break. */
export type Block = { kind: "text"; lines: string[] } | { kind: "grid"; rows: string[][]; ruled: boolean } | { kind: "page-break" };

/** An invoice laid out, before it is written in a format: a letterhead (the page header), the body and the footer's cells. */
export interface InvoiceLayout {
  header: string[];
  body: Block[];
  footer: string[];
}

/** One generated invoice's data: its truth, and what the layouts need beside it. */
export interface InvoiceData {
  truth: InvoiceTruth;
  language: Language;
  /** A credit note: negative amounts. */
  credit: boolean;
  rate: number;
  net: number;
  items: { description: string; quantity: number; price: number }[];
  street: string;
  city: string;
  customerAddress: [string, string];
  bankName: string;
}

const text = (...lines: string[]): Block => ({ kind: "text", lines });
const columns = (rows: string[][]): Block => ({ kind: "grid", rows, ruled: false });
const table = (rows: string[][]): Block => ({ kind: "grid", rows, ruled: true });

function money(data: InvoiceData, amount: number): string {
  return writeMoney(amount, data.truth.total.currency, data.language);
}

function dateOf(data: InvoiceData, iso: string, us = false): string {
  return writeDate(iso, data.language, us);
}

function itemsTable(data: InvoiceData, items = data.items): Block {
  const words = WORDING[data.language];
  const sign = data.credit ? -1 : 1;
  return table([
    [...words.items],
    ...items.map((item) => [item.description, String(item.quantity), money(data, sign * item.price), money(data, sign * item.price * item.quantity)]),
  ]);
}

/** The net, VAT (or the exemption note) and total lines, each "label: value". */
function totalLines(data: InvoiceData): string[] {
  const words = WORDING[data.language];
  const sign = data.credit ? -1 : 1;
  const vat = data.truth.vat === undefined ? [words.exempt] : [`${words.vat} ${writeRate(data.rate, data.language)}: ${money(data, data.truth.vat.amount)}`];
  return [`${words.net}: ${money(data, sign * data.net)}`, ...vat, `${words.total}: ${money(data, data.truth.total.amount)}`];
}

function title(data: InvoiceData): string {
  const words = WORDING[data.language];
  return data.credit ? words.creditNote : words.invoice;
}

function numberLabel(data: InvoiceData): string {
  const words = WORDING[data.language];
  return data.credit ? words.creditNumber : words.number;
}

function bankFooter(data: InvoiceData): string[] {
  const words = WORDING[data.language];
  return [`${words.company}: ${data.truth.supplier}`, `${words.bank}: ${data.bankName}`, `IBAN: ${data.truth.iban}`, "BIC: COBADEFFXXX"];
}

/**
 * Issue 47.1's layout: a two-column header block, the customer's address on the left and the
 * invoice's labels and values on the right, three columns in all.
 */
function twoColumnHeader(data: InvoiceData): InvoiceLayout {
  const words = WORDING[data.language];
  const { truth } = data;
  return {
    header: [`${words.supplier}: ${truth.supplier}`, `${data.street}, ${data.city}`],
    body: [
      text(title(data)),
      columns([
        [`${words.customer}:`, `${numberLabel(data)}:`, truth.number],
        [truth.customer, `${words.date}:`, dateOf(data, truth.date)],
        [data.customerAddress[0], `${words.due}:`, dateOf(data, truth.due)],
        [data.customerAddress[1], `${words.po}:`, truth.po],
      ]),
      itemsTable(data),
      text(...totalLines(data)),
    ],
    footer: bankFooter(data),
  };
}

/** Issue 52's first pattern: a key/value table read as if its first row were a header, and totals in a key/value table with the rate beside the label. */
function keyValueTable(data: InvoiceData): InvoiceLayout {
  const words = WORDING[data.language];
  const { truth } = data;
  const sign = data.credit ? -1 : 1;
  const vat = truth.vat === undefined ? [] : [[`${words.vat} ${writeRate(data.rate, data.language)}`, money(data, truth.vat.amount)]];
  return {
    header: [],
    body: [
      text(truth.supplier, `${data.street}, ${data.city}`, title(data)),
      table([
        [numberLabel(data), truth.number],
        [words.date, dateOf(data, truth.date)],
        [words.due, dateOf(data, truth.due)],
        [words.po, truth.po],
        [words.supplier, truth.supplier],
        [words.customer, truth.customer],
        [words.customerId, "4711"],
      ]),
      itemsTable(data),
      table([[words.net, money(data, sign * data.net)], ...vat, [words.total, money(data, truth.total.amount)]]),
      ...(truth.vat === undefined ? [text(words.exempt)] : []),
      text(`IBAN: ${truth.iban}`),
    ],
    footer: [],
  };
}

/** A DIN 5008 letter: the supplier's letterhead, an address field, an information block beside it, and bank details in the footer. */
function din5008(data: InvoiceData): InvoiceLayout {
  const words = WORDING[data.language];
  const { truth } = data;
  return {
    header: [`${truth.supplier} · ${data.street} · ${data.city}`],
    body: [
      columns([
        [`${words.customer}:`, `${numberLabel(data)}: ${truth.number}`],
        [truth.customer, `${words.customerId}: 10023`],
        [data.customerAddress[0], `${words.date}: ${dateOf(data, truth.date)}`],
        [data.customerAddress[1], `${words.po}: ${truth.po}`],
      ]),
      text(title(data)),
      itemsTable(data),
      text(...totalLines(data), `${words.due}: ${dateOf(data, truth.due)}`, `${words.vatId}: DE 123 456 789`),
    ],
    footer: bankFooter(data),
  };
}

/** A US layout: "From" and "Bill to" side by side with the names below them, dates with month names, sales tax at a rate with decimals. */
function usLayout(data: InvoiceData): InvoiceLayout {
  const words = WORDING[data.language];
  const { truth } = data;
  const sign = data.credit ? -1 : 1;
  const tax = truth.vat === undefined ? [words.exempt] : [`Sales tax (${writeRate(data.rate, data.language)}): ${money(data, truth.vat.amount)}`];
  return {
    header: [],
    body: [
      text(title(data), `${numberLabel(data)} ${truth.number}`),
      columns([
        ["From:", `${words.customer}:`],
        [truth.supplier, truth.customer],
        [data.street, data.customerAddress[0]],
      ]),
      text(`${words.date}: ${dateOf(data, truth.date, true)}`, `Payment due: ${dateOf(data, truth.due, true)}`, `P.O. Number: ${truth.po}`),
      itemsTable(data),
      text(`${words.net}: ${money(data, sign * data.net)}`, ...tax, `Amount due: ${money(data, truth.total.amount)}`, `${words.vatId} GB 123 4567 89`),
      text(`IBAN ${truth.iban}`, `${words.customerId}: 4711`),
    ],
    footer: [],
  };
}

/** Two pages: the header (dates with month names) and the first items on page 1, the rest, the totals and the bank details on page 2. */
function twoPages(data: InvoiceData): InvoiceLayout {
  const words = WORDING[data.language];
  const { truth } = data;
  const half = Math.ceil(data.items.length / 2);
  return {
    header: [truth.supplier],
    body: [
      text(title(data), `${words.supplier}: ${truth.supplier}`, `${words.customer}: ${truth.customer}`, `${numberLabel(data)}: ${truth.number}`),
      text(
        `${words.date}: ${writeLongDate(truth.date, data.language)}`,
        `${words.due}: ${writeLongDate(truth.due, data.language)}`,
        `${words.po}: ${truth.po}`,
      ),
      itemsTable(data, data.items.slice(0, half)),
      { kind: "page-break" },
      itemsTable(data, data.items.slice(half)),
      text(...totalLines(data)),
    ],
    footer: bankFooter(data),
  };
}

/**
 * Issue 52's fourth pattern: key/value pairs stacked in cells, each cell several lines (a DOCX
 * cell's paragraphs, an HTML cell's `<br>`s): a value runs to the end of its line.
 */
function stackedCells(data: InvoiceData): InvoiceLayout {
  const words = WORDING[data.language];
  const { truth } = data;
  return {
    header: [],
    body: [
      text(title(data)),
      table([
        [
          [`${words.supplier}: ${truth.supplier}`, data.street, data.city].join("\n"),
          [`${words.customer}: ${truth.customer}`, ...data.customerAddress].join("\n"),
          [
            `${numberLabel(data)}: ${truth.number}`,
            `${words.date}: ${dateOf(data, truth.date)}`,
            `${words.due}: ${dateOf(data, truth.due)}`,
            `${words.po}: ${truth.po}`,
          ].join("\n"),
        ],
      ]),
      itemsTable(data),
      text(...totalLines(data), `IBAN: ${truth.iban}`),
    ],
    footer: [],
  };
}

/** Labels above their values: a header row of labels and a row of values, as many invoicing tools print them. */
function labelsAbove(data: InvoiceData): InvoiceLayout {
  const words = WORDING[data.language];
  const { truth } = data;
  return {
    header: [`${words.supplier}: ${truth.supplier}`],
    body: [
      text(title(data), `${words.customer}:`, truth.customer, ...data.customerAddress),
      table([
        [numberLabel(data), words.date, words.due, words.po],
        [truth.number, dateOf(data, truth.date), dateOf(data, truth.due), truth.po],
      ]),
      itemsTable(data),
      text(...totalLines(data)),
    ],
    footer: [`${words.bank}: ${data.bankName}`, `IBAN: ${truth.iban}`],
  };
}

/** The layout templates, each a function of an invoice's data. */
export const LAYOUTS = { twoColumnHeader, keyValueTable, din5008, usLayout, twoPages, stackedCells, labelsAbove } satisfies Record<
  string,
  (data: InvoiceData) => InvoiceLayout
>;

export type LayoutName = keyof typeof LAYOUTS;
