/* `asyncscope dump`: placeholder until the async stack dump lands. */
#include "cli/commands.h"

int cmd_dump(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("dump is not built yet");
	return 1;
}
