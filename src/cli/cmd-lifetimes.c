/* cmd-lifetimes.c - placeholder */
#include "cli.h"
int hs_cmd_lifetimes(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return hs_die("not yet");
}
