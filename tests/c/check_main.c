/* check_main.c: the Check runner for every C suite.
 *
 * Each tests/c/check_<file>.c defines `Suite *suite_<file>(void)`. They are declared weak here so the
 * runner links whatever suites exist; the list below is the whole set the library has.
 * Exit status 0 when every test passed, 1 otherwise. CK_FORK stays on (sanitizer aborts become
 * per-test errors instead of killing the run).
 */
#include <check.h>
#include <stdlib.h>

#define SUITES(X) X(util) X(rng) X(attention) X(features) X(random) X(lowrank) X(generate) X(npy) \
                  X(spectrum) X(readouts) X(model) X(llama) X(variants) X(recurrent) X(mechanisms) \
                  X(blockmean) X(gated) X(dplr_fox) X(gates) X(swap) X(lolcats) X(safetensors) X(hf_tokenizer) \
                  X(json)
#define DECLARE(name) extern Suite *suite_##name(void) __attribute__((weak));
SUITES(DECLARE)

int main(void) {
    SRunner *sr = srunner_create(NULL);
#define ADD(name) if (suite_##name) srunner_add_suite(sr, suite_##name());
    SUITES(ADD)
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
