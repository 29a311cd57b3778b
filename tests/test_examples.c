/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: replaced by the real suite. */
#include "suites.h"

Suite *suite_examples(void)
{
	return suite_create("examples");
}
