/* The names of the event vocabulary's probe roles (trace/event.h). */
#include "trace/event.h"

const char *as_role_name(unsigned role)
{
	static const char *const names[AS_ROLE__MAX] = {
		[AS_ROLE_POLL] = "poll", [AS_ROLE_READY] = "ready", [AS_ROLE_WAKE] = "wake",
		[AS_ROLE_SPAWN] = "spawn", [AS_ROLE_FREE] = "free", [AS_ROLE_PARK] = "park",
		[AS_ROLE_IO_DRIVER] = "io", [AS_ROLE_TIMER] = "timer", [AS_ROLE_USDT] = "usdt",
		[AS_ROLE_FUTURE] = "future",
	};
	return role < AS_ROLE__MAX ? names[role] : NULL;
}
