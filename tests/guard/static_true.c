/* SPDX-License-Identifier: MIT */
/*
 * guard-static-true: exits 0.  Linked statically (tests/guard/meson.build),
 * so that ld.so never runs and nothing preloaded loads: the launcher
 * must say that its command ran unguarded (test_options.c).
 */
int main(void)
{
	return 0;
}
