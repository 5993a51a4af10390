"""File components: Read File, Write File, Directory and File System (stored files, contained local roots)."""
