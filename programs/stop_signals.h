/* SPDX-License-Identifier: MIT */
/*
 * stop_signals.h - the programs (programs/, examples/) that stop on SIGINT or SIGTERM
 * (giong_config.shutdown_on_signals) keep both blocked from before their run to
 * their exit.
 *
 * Why: the runtime blocks them during the run and gives the caller's mask back
 * before giong_runtime_run() returns. A second SIGTERM, which timeout(1) and
 * systemd send to the process group right after the one to the process, that
 * lands once the run has ended takes its default action: the program dies with
 * status 143 before its clean-up and its last words (a stream of SIGTERMs killed
 * giong-serve in 2 of 6 stops). Blocked, it stays pending, and the program exits
 * as it meant to. The run still reads them through its ring meanwhile.
 */
#ifndef GIONG_TOOLS_STOP_SIGNALS_H
#define GIONG_TOOLS_STOP_SIGNALS_H

#include <pthread.h>
#include <signal.h>

/* Call on the thread that calls giong_runtime_run(), before it. */
static inline void tool_block_stop_signals(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

#endif /* GIONG_TOOLS_STOP_SIGNALS_H */
