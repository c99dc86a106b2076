/** Why a reviewer's correction cannot be applied: the member of the corrected data it concerns. */
export class ReviewDataError extends Error {
  override name = "ReviewDataError";
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}
