/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: replaced by the real suite. */
#include "suites.h"

Suite *suite_differential(void)
{
	return suite_create("differential");
}
