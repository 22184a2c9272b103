/** A document the view cannot read; the message says what is wrong with it. */
export class PayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PayloadError";
  }
}
