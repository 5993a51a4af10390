// "Embed into site": the reference's chat widget snippet. The widget is the reference's separately published
// web component (its own repository, served by jsDelivr); this server neither hosts nor fetches it: the
// visitor's browser loads it. The widget registers the element ``langflow-chat``; the snippet names it
// ``service-chat`` (the brand word replaced, as everywhere) through a one-line alias of that element.

export const WIDGET_SCRIPT = "https://cdn.jsdelivr.net/gh/logspace-ai/langflow-embedded-chat@v1.0.7/dist/build/static/js/bundle.min.js";
const WIDGET_ELEMENT = "langflow-chat";
export const EMBED_ELEMENT = "service-chat";

function attr(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

export function embedSnippet(i: { hostUrl: string; flowId: string; windowTitle: string; apiKey?: string | null }): string {
  const alias =
    `customElements.whenDefined("${WIDGET_ELEMENT}").then(() => customElements.get("${EMBED_ELEMENT}") || ` +
    `customElements.define("${EMBED_ELEMENT}", class extends customElements.get("${WIDGET_ELEMENT}") {}));`;
  const lines = [
    `<script src="${WIDGET_SCRIPT}"></script>`,
    `<script>${alias}</script>`,
    "",
    `<${EMBED_ELEMENT}`,
    `  window_title="${attr(i.windowTitle)}"`,
    `  flow_id="${attr(i.flowId)}"`,
    `  host_url="${attr(i.hostUrl.replace(/\/+$/, ""))}"`,
  ];
  if (i.apiKey) lines.push(`  api_key="${attr(i.apiKey)}"`);
  lines.push(`></${EMBED_ELEMENT}>`);
  return lines.join("\n");
}
