/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: replaced by the real suite. */
#include "suites.h"

Suite *suite_json(void)
{
	return suite_create("json");
}
