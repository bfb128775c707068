"""The dream: sources → material → engine → verify/screen → integrate → commits → receipt."""
