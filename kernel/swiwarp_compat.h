/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * swiwarp: every difference between the kernels we build for, in one place.
 *
 * Supported and tested: Debian 12's 6.1 and Debian's 6.12 (Debian 13, and
 * bookworm's 6.12 from its security archive).  Each entry names the kernel
 * interface, what changed and the upstream release that changed it.  The
 * SWIWARP_HAVE_* switches come from Kbuild, which looks for the newer
 * declaration in the headers being built against (not at the version
 * number: Debian backports into its kernels).  Everything else the module
 * uses (ib_device_ops but create_cq, INIT_RDMA_OBJ_SIZE, iw_cm, ib_umem,
 * rdma_user_mmap entries, rdma_link_ops, the netdev notifier, sk callbacks,
 * tcp_read_sock, kernel_bind/connect/accept, msg_ubuf with MSG_ZEROCOPY,
 * the crc32c shash, the hw-stats ops alloc_hw_port_stats/get_hw_stats with
 * struct rdma_stat_desc and rdma_alloc_hw_stats_struct()) was checked
 * against both kernels and is the same.
 */

#ifndef SWIWARP_COMPAT_H
#define SWIWARP_COMPAT_H

#include <linux/bvec.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

int swiwarp_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);

/*
 * ib_device_ops.create_cq: 6.10 ("RDMA: Pass entire uverbs attr bundle to
 * create cq function") passes the uverbs_attr_bundle of the call instead
 * of its udata, which is the bundle's driver_udata; kernel CQs get NULL in
 * both.  swiwarp_create_cq() keeps the udata form.
 */
#ifdef SWIWARP_HAVE_CREATE_CQ_ATTRS
static inline int swiwarp_create_cq_op(struct ib_cq *ibcq,
				       const struct ib_cq_init_attr *attr,
				       struct uverbs_attr_bundle *attrs)
{
	return swiwarp_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
static inline int swiwarp_create_cq_op(struct ib_cq *ibcq,
				       const struct ib_cq_init_attr *attr,
				       struct ib_udata *udata)
{
	return swiwarp_create_cq(ibcq, attr, udata);
}
#endif

/*
 * struct ubuf_info (the owner of zero-copy pages handed to TCP): 6.10
 * ("net: extend ubuf_info callback to ops structure") replaced its
 * callback member by a const ops table whose complete() has the same
 * signature.  swiwarp_zcopy.c defines one struct swiwarp_ubuf_ops and
 * installs it with swiwarp_ubuf_init().  Neither kernel's TCP calls
 * link_skb for a NULL one: one ubuf_info per skb, as before.
 */
#ifdef SWIWARP_HAVE_UBUF_INFO_OPS
#define swiwarp_ubuf_ops ubuf_info_ops

static inline void swiwarp_ubuf_init(struct ubuf_info *u,
				     const struct ubuf_info_ops *ops)
{
	u->ops = ops;
}
#else
struct swiwarp_ubuf_ops {
	void (*complete)(struct sk_buff *skb, struct ubuf_info *uarg,
			 bool zerocopy_success);
};

static inline void swiwarp_ubuf_init(struct ubuf_info *u,
				     const struct swiwarp_ubuf_ops *ops)
{
	u->callback = ops->complete;
}
#endif

/*
 * Sending a page by reference: 6.5 (the MSG_SPLICE_PAGES series) removed
 * kernel_sendpage() and proto_ops.sendpage; sendmsg() with MSG_SPLICE_PAGES
 * and a bio_vec iterator is the way now.  It also dropped
 * MSG_SENDPAGE_NOTLAST, whose job MSG_MORE does with MSG_SPLICE_PAGES.
 * Debian's 6.1 defines MSG_SPLICE_PAGES (a backport) but its TCP ignores
 * it, so what decides is whether kernel_sendpage() is still declared.
 * Both reference the page (the caller checked sendpage_ok()) and copy it
 * instead when the route has no scatter-gather.
 */
#ifndef SWIWARP_HAVE_KERNEL_SENDPAGE
#define SWIWARP_MSG_SENDPAGE_NOTLAST 0

static inline int swiwarp_sendpage(struct socket *sock, struct page *page,
				   int off, size_t len, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };
	struct bio_vec bv;

	bvec_set_page(&bv, page, len, off);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bv, 1, len);
	return sock_sendmsg(sock, &msg);
}
#else
#define SWIWARP_MSG_SENDPAGE_NOTLAST MSG_SENDPAGE_NOTLAST

static inline int swiwarp_sendpage(struct socket *sock, struct page *page,
				   int off, size_t len, int flags)
{
	return kernel_sendpage(sock, page, off, len, flags);
}
#endif

/*
 * A kernel socket (sock_create_kern(), and every socket accepted from one)
 * holds no reference on its network namespace: its owner is expected to
 * close it before the namespace is dismantled.  A connection socket of
 * ours can outlive every rdma_cm id of the namespace (a request whose
 * listener went, a connection still closing), so swiwarp_sock_hold_net()
 * makes it hold the namespace as a user socket does.  6.14 ("net: better
 * track kernel sockets lifetime") added sk_net_refcnt_upgrade() for this,
 * which Debian's 6.12 has as a stable backport (its kernel sockets hold a
 * passive reference that the upgrade gives back); before it, its users
 * (sunrpc, mptcp, smc) set the three things by hand, as below.
 * __sk_destruct() drops what either way took.
 */
#ifdef SWIWARP_HAVE_SK_NET_REFCNT_UPGRADE
static inline void swiwarp_sock_hold_net(struct sock *sk)
{
	sk_net_refcnt_upgrade(sk);
}
#else
static inline void swiwarp_sock_hold_net(struct sock *sk)
{
	struct net *net = sock_net(sk);

	sk->sk_net_refcnt = 1;
	get_net_track(net, &sk->ns_tracker, GFP_KERNEL);
	sock_inuse_add(net, 1);
}
#endif

#endif /* SWIWARP_COMPAT_H */
