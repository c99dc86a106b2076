// heic-decode ships no types; this is the part of its API the parse code uses.
declare module "heic-decode" {
  interface DecodedImage {
    width: number;
    height: number;
    /** RGBA, 4 bytes per pixel. */
    data: Uint8ClampedArray;
  }
  interface HeifImage {
    width: number;
    height: number;
    decode(): Promise<DecodedImage>;
  }
  /** Decodes the primary image. */
  function decode(input: { buffer: Uint8Array | ArrayBuffer }): Promise<DecodedImage>;
  namespace decode {
    /** Every image of the file, sized but not decoded; `dispose` frees them. */
    function all(input: { buffer: Uint8Array | ArrayBuffer }): Promise<HeifImage[] & { dispose(): void }>;
  }
  export default decode;
}
