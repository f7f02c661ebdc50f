// harness-rank: the rank program, the only executable that loads LibTorch. `harness` starts it
// as a process: one per rank of a run (`worker`), of a communication profile (`comm-worker`),
// of a layer profile (`profile layers`), for the zoo's answers (`models`, `layers`,
// `version`), for the machine's limits (`machine`) and for the SPMD search's operator times
// (`spmd-times`). Nobody needs to run it by hand but to start
// ranks of a run themselves.
#include "rank/rank_main.h"

int main(int argc, char** argv) { return harness::rank_main(argc, argv); }
