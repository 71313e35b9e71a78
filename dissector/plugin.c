// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * swiwarp Wireshark plugin entry points.
 *
 * Wireshark 4.0 loads a binary plugin by looking up exactly four exported
 * symbols: plugin_version, plugin_want_major, plugin_want_minor and
 * plugin_register.  Everything else in the module is hidden.
 */
#define WS_BUILD_DLL
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/proto.h>
#include <epan/tap.h>
#include <ws_version.h>

#include "plugin.h"

#ifndef SWIWARP_PLUGIN_VERSION
#define SWIWARP_PLUGIN_VERSION "0.0.0"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = SWIWARP_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

static void register_protocols(void)
{
	swiwarp_register_mpa();
	swiwarp_register_rdmap();
}

static void register_handoffs(void)
{
	swiwarp_handoff_mpa();
	swiwarp_handoff_rdmap();
	swiwarp_handoff_ulp();
}

void plugin_register(void)
{
	static proto_plugin protos;
	static tap_plugin taps;

	protos.register_protoinfo = register_protocols;
	protos.register_handoff = register_handoffs;
	proto_register_plugin(&protos);

	taps.register_tap_listener = swiwarp_register_stats;
	tap_register_plugin(&taps);
}
