"""Developer tools shipped with maixemu (model generators)."""
