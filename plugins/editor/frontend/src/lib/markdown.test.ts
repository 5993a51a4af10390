import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown } from "./markdown";

const html = (text: string) => renderToStaticMarkup(createElement(Markdown, { text }));

describe("note markdown", () => {
  it("renders headings, paragraphs, emphasis and code", () => {
    expect(html("## Title\n\nSome **bold** and *it* with `x = 1`.")).toBe(
      "<h4>Title</h4><p>Some <strong>bold</strong> and <em>it</em> with <code>x = 1</code>.</p>",
    );
  });
  it("renders lists and code blocks", () => {
    expect(html("- one\n- two\n\n1. first\n2. second")).toBe("<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>");
    expect(html("```\n<b>not html</b>\n```")).toBe("<pre><code>&lt;b&gt;not html&lt;/b&gt;</code></pre>");
  });
  it("links only to http(s) and mailto, and never injects HTML", () => {
    expect(html("[docs](https://example.com/a)")).toBe('<p><a href="https://example.com/a" target="_blank" rel="noopener noreferrer">docs</a></p>');
    expect(html("[x](javascript:alert(1))")).not.toContain("href");
    expect(html("<img src=x onerror=alert(1)>")).toBe("<p>&lt;img src=x onerror=alert(1)&gt;</p>");
  });
});
