import { invalidArgument } from "./errors.ts";

/**
 * A closed set of column values and the proto enum values that stand for them, written once as
 * `{ column: ProtoEnum.VALUE }` and read both ways. A proto enum's UNSPECIFIED (0) stands for no
 * column value: in a filter it means "any".
 */
export class EnumColumn<Column extends string, Proto extends number> {
  readonly #toProto: Readonly<Record<Column, Proto>>;
  readonly #toColumn: ReadonlyMap<number, Column>;
  /** How messages name the enum, such as "a PipeState". */
  readonly #name: string;

  constructor(name: string, toProto: Readonly<Record<Column, Proto>>) {
    this.#name = name;
    this.#toProto = toProto;
    this.#toColumn = new Map(Object.entries<Proto>(toProto).map(([column, proto]) => [proto, column as Column]));
  }

  /** The proto value of a column value. */
  proto(column: Column): Proto {
    return this.#toProto[column];
  }

  /** The column value a filter field asks for: undefined for UNSPECIFIED (any), InvalidArgument naming `field` for a number outside the set. */
  filter(value: Proto, field: string): Column | undefined {
    if (value === 0) return undefined;
    const column = this.#toColumn.get(value);
    if (column === undefined) throw invalidArgument(field, `${field} ${value} is not ${this.#name}`);
    return column;
  }
}
