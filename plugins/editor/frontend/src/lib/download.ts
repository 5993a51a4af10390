/** Save a Response (JSON or ZIP) as a file in the browser. */
export async function saveResponse(res: Response, fallbackName: string) {
  const blob = await res.blob();
  const cd = res.headers.get("Content-Disposition") ?? "";
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
  const type = res.headers.get("Content-Type") ?? "";
  let name = m ? decodeURIComponent(m[1]) : fallbackName;
  if (!m && type.includes("zip") && !name.endsWith(".zip")) name = name.replace(/\.json$/, "") + ".zip";
  saveBlob(blob, name);
}

export function saveBlob(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function safeFileName(name: string): string {
  return name.replace(/[^\w\- .()]+/g, "_").slice(0, 80) || "flow";
}
