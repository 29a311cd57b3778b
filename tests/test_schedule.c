/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: replaced by the real suite. */
#include "suites.h"

Suite *suite_schedule(void)
{
	return suite_create("schedule");
}
