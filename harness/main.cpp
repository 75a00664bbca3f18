// Placeholder; the CLI lands with the harness.
int main() { return 0; }
