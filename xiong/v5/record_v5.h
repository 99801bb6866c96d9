// Xiong v5's record: what the analysis reads, exported from the study's run directories (OUT) into
// a folder that is committed as the study grows (docs/xiong/data/v5). Each file is rewritten
// atomically, so a kill leaves the old record or the new:
//   runs.csv          one row per finished run (completed or diverged): run, arm, seed, status,
//                     reason, steps_done, epochs_done, best_epoch, best_val_loss, test_checkpoint,
//                     test_bleu, test_chrf, test_bleu_last, test_chrf_last, test_bleu_signature,
//                     started_utc, finished_utc, commit, code_crc32, cpu, threads, sittings,
//                     one_build_one_cpu, fp32_gemm, fingerprint
//   val_curves.csv    run, arm, seed, epoch, step, lr, train_loss, val_loss, val_bleu, val_chrf
//   init_profile.csv  copied from OUT (xiong/v5/init_probe_v5.h), when the probe has run
//   frozen_build.json copied from OUT
//   hypotheses/<run>.txt  the run's test translations from the scored checkpoint
//   test_references.tsv   the test split's two references, "target<TAB>second" a line (from the
//                     corpus of the first finished run; the pooled bootstrap of the analysis reads it)
// A run directory is named "<arm>,seed=<seed>" for a registered arm; other folders are ignored.
#pragma once
#include <filesystem>

#include "xiong/v5/registration_v5.h"

namespace normlab::xiong {

void write_record_v5(const RegistrationV5& reg, const std::filesystem::path& out_dir,
                     const std::filesystem::path& record_dir);

}  // namespace normlab::xiong
