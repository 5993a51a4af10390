"""File components: Read File, Write File, Directory and File System over the user's stored files and local directories."""
