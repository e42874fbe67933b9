// Diagnostic sites for checked-lines.test (not compiled).
void sites(Operation *op) {
  op->emitError("fixture: checked by a CHECK line of the default prefix");
  op->emitError("fixture: checked by a line of a prefix the file names");
  op->emitError("fixture: checked by an expected-error annotation");
  op->emitWarning("fixture: checked by an expected-warning annotation");
  op->emitError("fixture: in the input of a test only, never checked");
  op->emitError("fixture: in a CHECK-NOT line only, never checked");
  op->emitError("fixture: in a comment of a test only, never checked");
}
