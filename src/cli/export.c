/* `asyncscope export`: placeholder until the exporters land. */
#include "cli/commands.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("export is not built yet");
	return 1;
}
