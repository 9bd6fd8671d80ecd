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

bool as_meta_lite(const struct as_trace_meta *m)
{
	bool poll = false, wake = false;

	for (uint32_t i = 0; m && i < m->n_probes; i++) {
		poll |= m->probes[i].role == AS_ROLE_POLL;
		wake |= m->probes[i].role == AS_ROLE_WAKE;
	}
	return poll && !wake;
}
