/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: replaced by the real suite. */
#include "suites.h"

Suite *suite_image(void)
{
	return suite_create("image");
}
