// The program that builds the tests' precompiled header (tests/CMakeLists.txt); it does nothing.
int main() { return 0; }
