// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: module setup, device registration with the RDMA core, the
 * "swiwarp" rdma link type and netdev event handling.
 */

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "swiwarp.h"
#include "swiwarp_verbs.h"

MODULE_AUTHOR("swiwarp developers");
MODULE_DESCRIPTION("Software iWARP RDMA (MPA/DDP/RDMAP over kernel TCP)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("swiwarp");

int swiwarp_mpa_crc = SWIWARP_CRC_REQUEST;
module_param_named(mpa_crc, swiwarp_mpa_crc, int, 0644);
MODULE_PARM_DESC(mpa_crc,
		 "MPA CRC policy: 0=refuse, 1=accept if peer asks, 2=request (default)");

int swiwarp_mpa_rev = 2;
module_param_named(mpa_rev, swiwarp_mpa_rev, int, 0644);
MODULE_PARM_DESC(mpa_rev, "MPA revision to initiate with: 1 or 2 (default 2)");

bool swiwarp_peer_to_peer;
module_param_named(peer_to_peer, swiwarp_peer_to_peer, bool, 0644);
MODULE_PARM_DESC(peer_to_peer,
		 "Request MPA v2 peer-to-peer mode (RTR) when initiating (default off)");

int swiwarp_rtr_type = 0x6;
module_param_named(rtr_type, swiwarp_rtr_type, int, 0644);
MODULE_PARM_DESC(rtr_type,
		 "RTR kinds offered as P2P initiator, bitmask 1=SEND 2=WRITE 4=READ (default 6)");

int swiwarp_mpa_timeout_ms = 10000;
module_param_named(mpa_timeout_ms, swiwarp_mpa_timeout_ms, int, 0644);
MODULE_PARM_DESC(mpa_timeout_ms,
		 "MPA negotiation timeout in milliseconds (default 10000)");

bool swiwarp_markers;
module_param_named(markers, swiwarp_markers, bool, 0644);
MODULE_PARM_DESC(markers,
		 "Ask peers to insert MPA markers into the FPDUs they send to us (M bit, RFC 5044); markers are always sent when a peer asks (default 0)");

struct workqueue_struct *swiwarp_tx_wq;

static const struct ib_device_ops swiwarp_dev_ops = {
	.owner = THIS_MODULE,
	.uverbs_abi_ver = SWIWARP_ABI_VERSION,
	.driver_id = (enum rdma_driver_id)SWIWARP_DRIVER_ID,

	.alloc_hw_port_stats = swiwarp_alloc_hw_port_stats,
	.alloc_mr = swiwarp_alloc_mr,
	.alloc_pd = swiwarp_alloc_pd,
	.alloc_ucontext = swiwarp_alloc_ucontext,
	.create_cq = swiwarp_create_cq_op,
	.create_qp = swiwarp_create_qp,
	.create_srq = swiwarp_create_srq,
	.dealloc_driver = swiwarp_dealloc_driver,
	.dealloc_pd = swiwarp_dealloc_pd,
	.dealloc_ucontext = swiwarp_dealloc_ucontext,
	.dereg_mr = swiwarp_dereg_mr,
	.destroy_cq = swiwarp_destroy_cq,
	.destroy_qp = swiwarp_destroy_qp,
	.destroy_srq = swiwarp_destroy_srq,
	.disassociate_ucontext = swiwarp_disassociate_ucontext,
	.fill_res_cq_entry = swiwarp_fill_res_cq_entry,
	.fill_res_qp_entry = swiwarp_fill_res_qp_entry,
	.get_dma_mr = swiwarp_get_dma_mr,
	.get_hw_stats = swiwarp_get_hw_stats,
	.get_port_immutable = swiwarp_get_port_immutable,
	.iw_accept = swiwarp_accept,
	.iw_add_ref = swiwarp_qp_add_ref,
	.iw_connect = swiwarp_connect,
	.iw_create_listen = swiwarp_create_listen,
	.iw_destroy_listen = swiwarp_destroy_listen,
	.iw_get_qp = swiwarp_get_qp,
	.iw_reject = swiwarp_reject,
	.iw_rem_ref = swiwarp_qp_rem_ref,
	.map_mr_sg = swiwarp_map_mr_sg,
	.mmap = swiwarp_mmap,
	.mmap_free = swiwarp_mmap_free,
	.modify_qp = swiwarp_modify_qp,
	.modify_srq = swiwarp_modify_srq,
	.poll_cq = swiwarp_poll_cq,
	.post_recv = swiwarp_post_recv,
	.post_send = swiwarp_post_send,
	.post_srq_recv = swiwarp_post_srq_recv,
	.query_device = swiwarp_query_device,
	.query_gid = swiwarp_query_gid,
	.query_port = swiwarp_query_port,
	.query_qp = swiwarp_query_qp,
	.query_srq = swiwarp_query_srq,
	.reg_user_mr = swiwarp_reg_user_mr,
	.req_notify_cq = swiwarp_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, swiwarp_cq, base),
	INIT_RDMA_OBJ_SIZE(ib_pd, swiwarp_pd, base),
	INIT_RDMA_OBJ_SIZE(ib_qp, swiwarp_qp, base),
	INIT_RDMA_OBJ_SIZE(ib_srq, swiwarp_srq, base),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, swiwarp_ucontext, base),
};

/*
 * The link types an RDMA device can sit on: Ethernet and its relatives,
 * tunnels without a link layer, and loopback (RDMA within one host).
 */
static bool swiwarp_netdev_ok(struct net_device *nd)
{
	switch (nd->type) {
	case ARPHRD_ETHER:
	case ARPHRD_IEEE802:
	case ARPHRD_NONE:
	case ARPHRD_LOOPBACK:
		return true;
	default:
		return false;
	}
}

static void swiwarp_port_event(struct swiwarp_dev *sdev,
			       enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->base,
		.event = type,
		.element.port_num = 1,
	};

	ib_dispatch_event(&ev);
}

/* A copy of the device's MAC (its GID), which follows the netdev's. */
void swiwarp_dev_mac(struct swiwarp_dev *sdev, u8 *mac)
{
	spin_lock(&sdev->mac_lock);
	ether_addr_copy(mac, sdev->mac);
	spin_unlock(&sdev->mac_lock);
}

/*
 * The netdev has a new hardware address (ip link set ... address, or a
 * bond's failover with fail_over_mac=active, or a bond taking its first
 * slave's address).  rdma_cm finds an iWARP device by the GID that equals
 * the netdev's address (cma_acquire_dev_by_src_ip, cma_iw_acquire_dev),
 * so the GID follows it; the GID_CHANGE event makes the RDMA core's GID
 * cache read it again.  The node GUID stays: userspace knows the device
 * by it.
 */
static void swiwarp_netdev_changeaddr(struct swiwarp_dev *sdev,
				      struct net_device *nd)
{
	if (nd->addr_len < ETH_ALEN || is_zero_ether_addr(nd->dev_addr))
		return;
	spin_lock(&sdev->mac_lock);
	ether_addr_copy(sdev->mac, nd->dev_addr);
	spin_unlock(&sdev->mac_lock);
	swiwarp_port_event(sdev, IB_EVENT_GID_CHANGE);
}

/* Move every QP of the device to ERROR: the link is gone. */
static void swiwarp_netdev_down_work(struct work_struct *w)
{
	struct swiwarp_dev *sdev = container_of(w, struct swiwarp_dev,
						netdev_down);
	struct swiwarp_qp *qp;
	unsigned long idx;

	xa_lock(&sdev->qp_xa);
	xa_for_each(&sdev->qp_xa, idx, qp) {
		if (!kref_get_unless_zero(&qp->ref))
			continue;
		xa_unlock(&sdev->qp_xa);
		swiwarp_qp_error(qp);
		swiwarp_qp_put(qp);
		xa_lock(&sdev->qp_xa);
	}
	xa_unlock(&sdev->qp_xa);
	ib_device_put(&sdev->base);
}

static int swiwarp_netdev_event(struct notifier_block *nb,
				unsigned long event, void *arg)
{
	struct net_device *nd = netdev_notifier_info_to_dev(arg);
	struct ib_device *ibdev;
	struct swiwarp_dev *sdev;

	ibdev = ib_device_get_by_netdev(nd,
					(enum rdma_driver_id)SWIWARP_DRIVER_ID);
	if (!ibdev)
		return NOTIFY_DONE;
	sdev = to_sdev(ibdev);

	switch (event) {
	case NETDEV_UP:
		sdev->port_state = IB_PORT_ACTIVE;
		swiwarp_port_event(sdev, IB_EVENT_PORT_ACTIVE);
		break;
	case NETDEV_GOING_DOWN:
		if (ib_device_try_get(&sdev->base))
			if (!schedule_work(&sdev->netdev_down))
				ib_device_put(&sdev->base);
		break;
	case NETDEV_DOWN:
		sdev->port_state = IB_PORT_DOWN;
		swiwarp_port_event(sdev, IB_EVENT_PORT_ERR);
		break;
	case NETDEV_UNREGISTER:
		/*
		 * A move to another network namespace sends this event too,
		 * with the netdev still NETREG_REGISTERED (6.1 and 6.12,
		 * __dev_change_net_namespace()); a real unregistration has
		 * set NETREG_UNREGISTERING.  The device's sockets live in the
		 * netdev's old namespace, which may be on its way out (ip
		 * netns del moves a NIC back to init_net): its listening
		 * sockets close now, not in the queued unregistration.
		 */
		if (nd->reg_state == NETREG_REGISTERED)
			dev_info(&sdev->base.dev,
				 "%s is moving to another network namespace: device removed (rdma link add it again in the new namespace)\n",
				 netdev_name(nd));
		WRITE_ONCE(sdev->netdev_gone, true);
		swiwarp_cm_netdev_gone(sdev);
		ib_unregister_device_queued(&sdev->base);
		break;
	case NETDEV_CHANGEADDR:
		swiwarp_netdev_changeaddr(sdev, nd);
		break;
	default:
		break;
	}
	ib_device_put(ibdev);
	return NOTIFY_OK;
}

static struct notifier_block swiwarp_netdev_nb = {
	.notifier_call = swiwarp_netdev_event,
};

static int swiwarp_newlink(const char *name, struct net_device *nd)
{
	struct ib_device *ibdev;
	struct swiwarp_dev *sdev;
	int rv;

	if (!swiwarp_netdev_ok(nd))
		return -EINVAL;

	ibdev = ib_device_get_by_netdev(nd,
					(enum rdma_driver_id)SWIWARP_DRIVER_ID);
	if (ibdev) {
		ib_device_put(ibdev);
		return -EEXIST;
	}

	sdev = ib_alloc_device(swiwarp_dev, base);
	if (!sdev)
		return -ENOMEM;
	rv = swiwarp_stats_alloc(sdev);
	if (rv) {
		ib_dealloc_device(&sdev->base);
		return rv;
	}

	dev_hold(nd);
	sdev->netdev = nd;
	spin_lock_init(&sdev->mac_lock);
	INIT_WORK(&sdev->netdev_down, swiwarp_netdev_down_work);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->mem_xa, XA_FLAGS_ALLOC1);
	atomic_set(&sdev->num_qp, 0);
	atomic_set(&sdev->num_cq, 0);
	atomic_set(&sdev->num_pd, 0);
	atomic_set(&sdev->num_mr, 0);
	atomic_set(&sdev->num_srq, 0);
	atomic_set(&sdev->num_ctx, 0);

	if (nd->addr_len >= ETH_ALEN && !is_zero_ether_addr(nd->dev_addr))
		ether_addr_copy(sdev->mac, nd->dev_addr);
	else
		eth_random_addr(sdev->mac);
	addrconf_addr_eui48((u8 *)&sdev->base.node_guid, sdev->mac);
	/*
	 * A netdev with a stolen MAC (a VLAN's is its real device's) would
	 * give a second device the node GUID of the first, and librdmacm
	 * finds a connection's device by GUID: the ULP would build its QP
	 * on the wrong device (iw_accept then fails with -EINVAL).  Its
	 * ifindex replaces the EUI-64's FF:FE filler.
	 */
	if (nd->addr_assign_type == NET_ADDR_STOLEN) {
		u8 *g = (u8 *)&sdev->base.node_guid;

		g[3] = nd->ifindex >> 8;
		g[4] = nd->ifindex;
	}

	sdev->base.node_type = RDMA_NODE_RNIC;
	strscpy(sdev->base.node_desc, "swiwarp software iWARP",
		sizeof(sdev->base.node_desc));
	sdev->base.phys_port_cnt = 1;
	/*
	 * Completions run in whichever context produced them, so the vector
	 * is only a hint; one per CPU lets ULPs that size their queues by it
	 * (nvme-rdma: min(nr_io_queues, CPUs, vectors)) use several queues.
	 */
	sdev->base.num_comp_vectors = num_possible_cpus();
	sdev->base.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	sdev->base.iw_driver_flags = IW_F_NO_PORT_MAP;
	strscpy(sdev->base.iw_ifname, nd->name, sizeof(sdev->base.iw_ifname));

	ib_set_device_ops(&sdev->base, &swiwarp_dev_ops);
	rv = ib_device_set_netdev(&sdev->base, nd, 1);
	if (rv)
		goto err;

	if (netif_running(nd) && netif_carrier_ok(nd))
		sdev->port_state = IB_PORT_ACTIVE;
	else
		sdev->port_state = IB_PORT_DOWN;

	rv = ib_register_device(&sdev->base, name, NULL);
	if (rv)
		goto err;
	return 0;
err:
	/* dealloc_driver is not called for a device never registered */
	swiwarp_stats_free(sdev);
	ib_dealloc_device(&sdev->base);
	dev_put(nd);
	return rv;
}

void swiwarp_dealloc_driver(struct ib_device *ibdev)
{
	struct swiwarp_dev *sdev = to_sdev(ibdev);

	swiwarp_cm_dev_cleanup(sdev);
	cancel_work_sync(&sdev->netdev_down);
	/* MRs whose last reference went in atomic context (swiwarp_mem.c) */
	flush_workqueue(swiwarp_tx_wq);
	WARN_ON(!xa_empty(&sdev->qp_xa));
	WARN_ON(!xa_empty(&sdev->mem_xa));
	xa_destroy(&sdev->qp_xa);
	xa_destroy(&sdev->mem_xa);
	/* no QP, no endpoint left: nothing counts any more */
	swiwarp_stats_free(sdev);
	dev_put(sdev->netdev);
}

static struct rdma_link_ops swiwarp_link_ops = {
	.type = SWIWARP_LINK_TYPE,
	.newlink = swiwarp_newlink,
};

/*
 * siw_compat: the "siw" link type creates swiwarp devices too, so scripts
 * written for upstream siw ("rdma link add X type siw netdev IF") work on
 * kernels built without it.  The RDMA core keeps one owner per link type
 * and WARNs when a second module registers the same one, so we hold "siw"
 * only while no real siw module exists: we refuse it while one is loaded
 * and hand it back as soon as one starts loading (before its init runs).
 * All state below is under swiwarp_siw_lock.
 */
static bool swiwarp_siw_compat;
static bool swiwarp_siw_ops_on;	/* "siw" is registered by us */
static bool swiwarp_siw_real;	/* a real siw came in after us */
static bool swiwarp_siw_ready;	/* module init done: register for real */
static DEFINE_MUTEX(swiwarp_siw_lock);

static struct rdma_link_ops swiwarp_siw_link_ops = {
	.type = "siw",
	.newlink = swiwarp_newlink,
};

static bool swiwarp_real_siw_present(void)
{
	struct path path;

	if (swiwarp_siw_real)
		return true;
	/*
	 * A siw loaded before us sent no module notification, and the RDMA
	 * core does not say who owns a link type; its sysfs directory shows
	 * that it is loaded.
	 */
	if (kern_path("/sys/module/siw", LOOKUP_DIRECTORY, &path))
		return false;
	path_put(&path);
	return true;
}

static int swiwarp_siw_apply(void)
{
	lockdep_assert_held(&swiwarp_siw_lock);
	if (!swiwarp_siw_ready)
		return 0;
	if (swiwarp_siw_compat && !swiwarp_siw_ops_on) {
		if (swiwarp_real_siw_present()) {
			pr_info("swiwarp: siw_compat: a siw module is loaded, link type siw stays its own\n");
			return -EBUSY;
		}
		rdma_link_register(&swiwarp_siw_link_ops);
		swiwarp_siw_ops_on = true;
		pr_info("swiwarp: siw_compat: link type siw creates swiwarp devices\n");
	} else if (!swiwarp_siw_compat && swiwarp_siw_ops_on) {
		rdma_link_unregister(&swiwarp_siw_link_ops);
		swiwarp_siw_ops_on = false;
		pr_info("swiwarp: siw_compat: off\n");
	}
	return 0;
}

static int swiwarp_siw_compat_set(const char *val,
				  const struct kernel_param *kp)
{
	bool on, old;
	int rv;

	/* a bare "siw_compat" on the command line means on, as for bools */
	rv = kstrtobool(val ? val : "1", &on);
	if (rv)
		return rv;
	mutex_lock(&swiwarp_siw_lock);
	old = swiwarp_siw_compat;
	swiwarp_siw_compat = on;
	rv = swiwarp_siw_apply();
	if (rv)
		swiwarp_siw_compat = old;
	mutex_unlock(&swiwarp_siw_lock);
	return rv;
}

static const struct kernel_param_ops swiwarp_siw_compat_ops = {
	.set = swiwarp_siw_compat_set,
	.get = param_get_bool,
};

module_param_cb(siw_compat, &swiwarp_siw_compat_ops, &swiwarp_siw_compat,
		0644);
MODULE_PARM_DESC(siw_compat,
		 "Also register the rdma link type \"siw\" (creating swiwarp devices) while no siw module is loaded (default 0)");

/* A real siw coming in takes its link type back before its init runs. */
static int swiwarp_module_event(struct notifier_block *nb,
				unsigned long event, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, "siw"))
		return NOTIFY_DONE;
	mutex_lock(&swiwarp_siw_lock);
	if (event == MODULE_STATE_COMING) {
		swiwarp_siw_real = true;
		if (swiwarp_siw_ops_on) {
			rdma_link_unregister(&swiwarp_siw_link_ops);
			swiwarp_siw_ops_on = false;
			swiwarp_siw_compat = false;
			pr_info("swiwarp: siw_compat: the siw module is loading, link type siw handed over to it\n");
		}
	} else if (event == MODULE_STATE_GOING) {
		swiwarp_siw_real = false;
	}
	mutex_unlock(&swiwarp_siw_lock);
	return NOTIFY_DONE;
}

static struct notifier_block swiwarp_module_nb = {
	.notifier_call = swiwarp_module_event,
};

static int __init swiwarp_init(void)
{
	int rv;

	rv = swiwarp_crc_init();
	if (rv)
		return rv;

	swiwarp_tx_wq = alloc_workqueue("swiwarp_tx",
					WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!swiwarp_tx_wq) {
		rv = -ENOMEM;
		goto err_crc;
	}

	rv = swiwarp_cm_init();
	if (rv)
		goto err_wq;

	rv = register_netdevice_notifier(&swiwarp_netdev_nb);
	if (rv)
		goto err_cm;

	rv = register_module_notifier(&swiwarp_module_nb);
	if (rv)
		goto err_nd;

	swiwarp_fault_init();
	rdma_link_register(&swiwarp_link_ops);
	mutex_lock(&swiwarp_siw_lock);
	swiwarp_siw_ready = true;
	/* a siw already loaded: load anyway, with siw_compat reading 0 */
	if (swiwarp_siw_apply())
		swiwarp_siw_compat = false;
	mutex_unlock(&swiwarp_siw_lock);
	pr_info("swiwarp: loaded (ABI %d, driver id 0x%x)\n",
		SWIWARP_ABI_VERSION, SWIWARP_DRIVER_ID);
	return 0;

err_nd:
	unregister_netdevice_notifier(&swiwarp_netdev_nb);
err_cm:
	swiwarp_cm_exit();
err_wq:
	destroy_workqueue(swiwarp_tx_wq);
err_crc:
	swiwarp_crc_exit();
	return rv;
}

static void __exit swiwarp_exit(void)
{
	unregister_module_notifier(&swiwarp_module_nb);
	mutex_lock(&swiwarp_siw_lock);
	swiwarp_siw_ready = false;
	if (swiwarp_siw_ops_on)
		rdma_link_unregister(&swiwarp_siw_link_ops);
	swiwarp_siw_ops_on = false;
	mutex_unlock(&swiwarp_siw_lock);
	rdma_link_unregister(&swiwarp_link_ops);
	unregister_netdevice_notifier(&swiwarp_netdev_nb);
	ib_unregister_driver((enum rdma_driver_id)SWIWARP_DRIVER_ID);
	swiwarp_cm_exit();
	destroy_workqueue(swiwarp_tx_wq);
	swiwarp_fault_exit();
	swiwarp_crc_exit();
	pr_info("swiwarp: unloaded\n");
}

module_init(swiwarp_init);
module_exit(swiwarp_exit);
