/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * address.h -- checking a peer's address before anything resolves it
 *
 * A typo in an address should be an error when the config is loaded, not a
 * reconnect loop after the mount. Only the form is checked here: an IPv4
 * literal, an IPv6 literal (with an optional %zone), or a host name. Names
 * are not resolved: the peer may come up later than rpmafs.
 */
#ifndef RPMAFS_CONFIG_ADDRESS_H
#define RPMAFS_CONFIG_ADDRESS_H

/*
 * cfg_address_problem -- NULL when s has the form of a host name or IP
 * address, or a static text that says what is wrong, to follow the quoted
 * value in a sentence.
 */
const char *cfg_address_problem(const char *s);

#endif /* RPMAFS_CONFIG_ADDRESS_H */
