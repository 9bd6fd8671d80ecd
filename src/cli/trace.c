/* `asyncscope trace`: placeholder until the HTML report lands. */
#include "cli/commands.h"

int cmd_trace(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("trace is not built yet");
	return 1;
}
