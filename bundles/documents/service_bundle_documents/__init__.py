"""File components: Read File (text, Markdown, CSV, JSON, PDF, DOCX) over the user's stored files."""
