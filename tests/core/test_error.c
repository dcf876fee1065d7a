/* SPDX-License-Identifier: MIT */
/*
 * test_error.c - giong_strerror() and giong_err_name() against what
 * <giong/core/error.h> promises: every GIONG_E* code, generated from
 * GIONG_ERROR_MAP, lies in [-4095, -4000) with a value, a name and a
 * non-empty message of its own; a plain errno (negative, or positive) gives
 * strerror's text; zero and unknown values give a sensible static string,
 * never NULL; the strings are static (a later call, or strerror() writing
 * its buffer, does not change them) and the same from any thread.
 *
 * No runtime is started: these are plain functions, usable before one.
 */
#include <limits.h>
#include <pthread.h>

#include "giong_test.h"

struct code {
	const char *name; /* "GIONG_ESHUTDOWN" */
	int value;
	const char *msg; /* the map's message */
};

static const struct code codes[] = {
#define XX(name, val, msg) {"GIONG_" #name, GIONG_##name, msg},
	GIONG_ERROR_MAP(XX)
#undef XX
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

/* errnos 1..ERRNO_MAX cover every errno Linux defines (133 today). */
#define ERRNO_MAX 200

/* strerror(@e) copied (strerror may write a shared buffer). */
static void strerror_copy(int e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strerror(e));
}

/* strerror()'s text for a number it does not know ("Unknown error 4001"). */
static bool strerror_unknown(int e)
{
	char buf[256];

	strerror_copy(e, buf, sizeof(buf));
	return strncmp(buf, "Unknown error", 13) == 0;
}

static void test_codes_in_range_and_distinct(void **state)
{
	(void)state;
	assert_true(NCODES >= 6); /* ESHUTDOWN ... EPARSE */
	for (size_t i = 0; i < NCODES; i++) {
		assert_true(codes[i].value >= -4095 && codes[i].value < -4000);
		/* Not a number strerror() knows: the code cannot be mistaken
		 * for an errno. */
		assert_true(strerror_unknown(-codes[i].value));
		for (size_t j = 0; j < i; j++) {
			assert_int_not_equal(codes[i].value, codes[j].value);
			assert_string_not_equal(codes[i].name, codes[j].name);
		}
	}
	assert_int_equal(GIONG_ESHUTDOWN, -4001);
	assert_int_equal(GIONG_EURING_DISABLED, -4002);
	assert_int_equal(GIONG_ENOURING, -4003);
	assert_int_equal(GIONG_EURING_OLD, -4004);
	assert_int_equal(GIONG_ENOTWORKER, -4005);
	assert_int_equal(GIONG_EPARSE, -4006);
}

static void test_each_code_has_its_own_message(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCODES; i++) {
		const char *m = giong_strerror(codes[i].value);

		assert_non_null(m);
		assert_true(m[0] != '\0');
		assert_string_equal(m, codes[i].msg);
		assert_string_not_equal(m, "unknown error");
		assert_string_not_equal(m, giong_strerror(0));
		for (size_t j = 0; j < NCODES; j++)
			if (j != i)
				assert_string_not_equal(m, giong_strerror(codes[j].value));
		/* Not the text of any errno either. */
		for (int e = 1; e <= ERRNO_MAX; e++) {
			char se[256];

			strerror_copy(e, se, sizeof(se));
			assert_string_not_equal(m, se);
			assert_string_not_equal(m, giong_strerror(-e));
		}
	}
}

static void test_codes_named(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCODES; i++) {
		assert_string_equal(giong_err_name(codes[i].value), codes[i].name);
		assert_string_equal(giong_err_name(-codes[i].value), codes[i].name);
	}
	assert_string_equal(giong_err_name(GIONG_ENOTWORKER), "GIONG_ENOTWORKER");
	assert_string_equal(giong_err_name(-ECONNRESET), "ECONNRESET");
	assert_string_equal(giong_err_name(ECANCELED), "ECANCELED");
	assert_string_equal(giong_err_name(-ENOBUFS), "ENOBUFS");
	assert_string_equal(giong_err_name(0), "OK");
	/* Not named: "unknown", never NULL. */
	assert_string_equal(giong_err_name(-4000), "unknown");
	assert_string_equal(giong_err_name(-4095), "unknown");
	assert_string_equal(giong_err_name(-100000), "unknown");
	assert_string_equal(giong_err_name(100000), "unknown");
	for (int e = -ERRNO_MAX; e <= ERRNO_MAX; e++) {
		const char *n = giong_err_name(e);

		assert_non_null(n);
		assert_true(n[0] != '\0');
		/* An errno's name is its own or "unknown", never a giong code's. */
		assert_int_not_equal(strncmp(n, "GIONG_", 6), 0);
	}
}

static void test_errnos_give_strerror_text(void **state)
{
	int known = 0;

	(void)state;
	for (int e = 1; e <= ERRNO_MAX; e++) {
		const char *neg = giong_strerror(-e), *pos = giong_strerror(e);
		char want[256];

		assert_non_null(neg);
		assert_non_null(pos);
		/* A positive errno is accepted too: the same text. */
		assert_string_equal(neg, pos);
		if (strerror_unknown(e)) {
			/* No errno of that number: giong's own "unknown" text,
			 * not strerror's buffer. */
			assert_string_equal(neg, "unknown error");
			continue;
		}
		known++;
		strerror_copy(e, want, sizeof(want));
		assert_string_equal(neg, want);
	}
	/* The loop did meet errnos (EPERM .. EHWPOISON on Linux). */
	assert_true(known >= 100);
	assert_non_null(strstr(giong_strerror(-ENOENT), "No such file"));
	assert_non_null(strstr(giong_strerror(-ECONNRESET), "reset"));
}

static void test_zero_and_unknown(void **state)
{
	/* Values no errno and no GIONG_E* code has. */
	static const int unknown[] = {
		-4000, -4007, -4094, -4095, -1000, -99999, 99999, INT_MAX, -INT_MAX, INT_MIN,
	};
	const char *zero = giong_strerror(0);

	(void)state;
	assert_non_null(zero);
	assert_true(zero[0] != '\0');
	assert_string_equal(zero, "success");
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		const char *m = giong_strerror(unknown[i]);

		assert_non_null(m);
		assert_true(m[0] != '\0');
		assert_string_equal(m, "unknown error");
		assert_string_not_equal(m, zero);
		for (size_t j = 0; j < NCODES; j++)
			assert_string_not_equal(m, codes[j].msg);
	}
}

/* Static strings: what a call returned is not changed by later calls, nor
 * by strerror() writing its buffer for a number it does not know. */
static void test_static_strings(void **state)
{
	const char *enoent = giong_strerror(-ENOENT);
	const char *unk = giong_strerror(-99999);
	const char *shut = giong_strerror(GIONG_ESHUTDOWN);
	char enoent_copy[256], unk_copy[256], shut_copy[256];

	(void)state;
	snprintf(enoent_copy, sizeof(enoent_copy), "%s", enoent);
	snprintf(unk_copy, sizeof(unk_copy), "%s", unk);
	snprintf(shut_copy, sizeof(shut_copy), "%s", shut);
	for (int e = -ERRNO_MAX; e <= ERRNO_MAX; e++)
		(void)giong_strerror(e);
	(void)strerror(12345); /* "Unknown error 12345" into strerror's buffer */
	(void)giong_strerror(-12345);
	(void)strerror(54321);
	assert_string_equal(enoent, enoent_copy);
	assert_string_equal(unk, unk_copy);
	assert_string_equal(shut, shut_copy);
	/* The same string each time. */
	assert_ptr_equal(giong_strerror(-ENOENT), enoent);
	assert_ptr_equal(giong_strerror(GIONG_ESHUTDOWN), shut);
	assert_ptr_equal(giong_err_name(-ENOENT), giong_err_name(-ENOENT));
}

/* From another thread: the same strings (nothing per thread). */
struct other {
	const char *enoent, *shut, *unk, *name;
};

static void *other_thread(void *arg)
{
	struct other *o = arg;

	o->enoent = giong_strerror(-ENOENT);
	o->shut = giong_strerror(GIONG_ESHUTDOWN);
	o->unk = giong_strerror(-99999);
	o->name = giong_err_name(GIONG_EPARSE);
	return NULL;
}

static void test_other_thread(void **state)
{
	struct other o = {0};
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, other_thread, &o), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_ptr_equal(o.enoent, giong_strerror(-ENOENT));
	assert_ptr_equal(o.shut, giong_strerror(GIONG_ESHUTDOWN));
	assert_string_equal(o.unk, "unknown error");
	assert_string_equal(o.name, "GIONG_EPARSE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes_in_range_and_distinct),
		cmocka_unit_test(test_each_code_has_its_own_message),
		cmocka_unit_test(test_codes_named),
		cmocka_unit_test(test_errnos_give_strerror_text),
		cmocka_unit_test(test_zero_and_unknown),
		cmocka_unit_test(test_static_strings),
		cmocka_unit_test(test_other_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
