// build/kgym: the command line (app.cpp) with the real engine as its only evaluator.
#include "commands.hpp"

int main(int argc, char** argv) { return kgym::cli::run_cli(argc, argv); }
