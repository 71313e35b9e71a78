/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The part of QEMU's TCG plugin API that tcg-profile uses, written out
 * from QEMU 7.2's (API version 1), the QEMU Debian 12 ships: Debian does
 * not package the header.  QEMU checks qemu_plugin_version at load and
 * refuses a plugin whose version it does not support, so a QEMU with
 * another API fails loudly rather than calling these with other types.
 * The names are QEMU's, so that its documentation applies.
 */
#ifndef TCG_PROFILE_QEMU_PLUGIN_ABI_H
#define TCG_PROFILE_QEMU_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
/* Version 1 has one inline operation, numbered 0. */
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op, void *ptr,
					      uint64_t imm);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

/*
 * What the plugin exports: the API version it was written for, and its
 * entry point.
 */
#define QEMU_PLUGIN_VERSION 1
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
extern QEMU_PLUGIN_EXPORT int qemu_plugin_version;
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv);

#endif /* TCG_PROFILE_QEMU_PLUGIN_ABI_H */
