// @mixmark-io/domino ships declarations for the module name 'domino' only, written against the DOM
// library this project does not load. What lib/rich-text.ts uses of it:
declare module '@mixmark-io/domino' {
  interface DominoElement {
    innerHTML: string;
    appendChild(node: unknown): unknown;
  }
  interface DominoDocument {
    createElement(tag: string): DominoElement;
  }
  export function createDocument(html?: string, force?: boolean): DominoDocument;
}
