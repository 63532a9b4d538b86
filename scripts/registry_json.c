/* registry_json: print av_registry_json() of the libattnviz.a it is linked against.
 *
 * scripts/compare-builds.sh links it against each of the two builds it compares: the CLI has no command
 * that prints the registry, and the comparison must read the variants and knobs of the build under test
 * rather than a hand-kept list.
 */
#include <stdio.h>

#include "attnviz.h"

int main(void) {
    const char *text = av_registry_json();
    if (!text || fputs(text, stdout) == EOF || putchar('\n') == EOF) return 1;
    return fflush(stdout) == 0 ? 0 : 1;
}
