/** What the report view's script sends to the extension (checked there: the webview is not trusted). */
export type ReportMessage = { readonly type: 'changeGpu' } | { readonly type: 'export'; readonly format: string; readonly model: number };
