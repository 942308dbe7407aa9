"""The hostile-frame fuzz suite: every parser and session against a mutated corpus."""
