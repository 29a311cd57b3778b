// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The arena accelerator as a DRM accel driver.
 *
 * There is no hardware: the module registers a platform device of its
 * own and binds a platform driver to it, whose probe registers a DRM
 * device with DRIVER_COMPUTE_ACCEL, so the DRM core gives it
 * /dev/accel/accelN and answers DRM_IOCTL_VERSION with "arena".  The
 * driver's ioctls are include/arenaguard/uapi.h's; each open file is a
 * context (struct arena_file) with its own handles, address space and
 * sequence numbers.
 *
 * Unloading: every open file holds a reference on the module (the
 * accel fops), so rmmod is refused until the last close, and the
 * platform device goes (drm_dev_unplug) only then.  After the unplug
 * drm_ioctl refuses the table's ioctls with ENODEV, and arena_uring_cmd
 * runs inside drm_dev_enter()/drm_dev_exit(), which drm_dev_unplug waits
 * for.
 */
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_accel.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_gem_shmem_helper.h>

#include "arena_drv.h"

bool arena_require_seal;
module_param_named(require_seal, arena_require_seal, bool, 0444);
MODULE_PARM_DESC(require_seal,
		 "Seal every context from its open: only sealed submissions run (uapi.h, \"Sealed submissions\")");

bool arena_poison;
module_param_named(poison, arena_poison, bool, 0444);
MODULE_PARM_DESC(poison,
		 "Poison each phase instance's fresh planes before it runs (contract/execute.h), the simulator's ARENASIM_POISON=1");

static struct platform_device *arena_pdev;

static int arena_open(struct drm_device *drm, struct drm_file *file)
{
	struct arena_device *adev = container_of(drm, struct arena_device, drm);
	struct arena_file *af = kzalloc(sizeof(*af), GFP_KERNEL);

	if (!af)
		return -ENOMEM;
	af->adev = adev;
	af->drm_file = file;
	mutex_init(&af->lock);
	xa_init_flags(&af->bos, XA_FLAGS_ALLOC1);
	xa_init_flags(&af->programs, XA_FLAGS_ALLOC1);
	xa_init_flags(&af->schedules, XA_FLAGS_ALLOC1);
	xa_init(&af->faulted);
	af->by_address = RB_ROOT;
	af->context = atomic64_inc_return(&adev->next_context);
	af->sealed = READ_ONCE(arena_require_seal);
	af->poison = READ_ONCE(arena_poison);
	file->driver_priv = af;
	return 0;
}

/* Empties a handle table, dropping every object in it. */
static void arena_drain(struct arena_file *af, struct xarray *xa,
			void (*drop)(struct arena_file *af, void *obj))
{
	unsigned long handle;
	void *obj;

	xa_for_each(xa, handle, obj) {
		xa_erase(xa, handle);
		drop(af, obj);
	}
}

/*
 * The context's last file is closed: schedules first (they use their
 * programs), then programs, then buffers.
 */
static void arena_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);

	mutex_lock(&af->lock);
	arena_drain(af, &af->schedules, arena_schedule_drop);
	arena_drain(af, &af->programs, arena_program_drop);
	arena_drain(af, &af->bos, arena_bo_drop);
	mutex_unlock(&af->lock);
	xa_destroy(&af->bos);
	xa_destroy(&af->programs);
	xa_destroy(&af->schedules);
	xa_destroy(&af->faulted);
	mutex_destroy(&af->lock);
	kfree(af);
	file->driver_priv = NULL;
}

/*
 * The handlers: drm_ioctl copied the argument in (and copies it out);
 * each takes the context's lock around its work.  The lock may be held
 * for long by another process sharing the file (an execution, stopped
 * only by that process's fatal signal), so waiting for it is killable:
 * a killed waiter leaves with -EINTR at once, never stuck in D state.
 */
int arena_lock(struct arena_file *af)
{
	return mutex_lock_killable(&af->lock) ? -EINTR : 0;
}

static int arena_ioctl_bo_create(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_bo_create(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_bo_mmap(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_bo_mmap_offset(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_bo_write(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_bo_rw(af, data, true);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_bo_read(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_bo_rw(af, data, false);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_bo_destroy(struct drm_device *drm, void *data,
				  struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_bo_destroy(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_program_create(struct drm_device *drm, void *data,
				      struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_program_create(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_program_destroy(struct drm_device *drm, void *data,
				       struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_program_destroy(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_schedule_create(struct drm_device *drm, void *data,
				       struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_schedule_create(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_schedule_append(struct drm_device *drm, void *data,
				       struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_schedule_append(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_wait(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_wait(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_schedule_destroy(struct drm_device *drm, void *data,
					struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_schedule_destroy(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

static int arena_ioctl_seal(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct arena_file *af = to_arena_file(file);
	int rc = arena_lock(af);

	if (rc)
		return rc;
	rc = arena_seal(af, data);
	mutex_unlock(&af->lock);
	return rc;
}

/* Both submit ioctls: the seqno is written back only on success. */
static int arena_submit_locked(struct drm_file *file, u32 schedule, u32 flags,
			       const struct arena_seal_check *check,
			       u64 *seqno_out)
{
	struct arena_file *af = to_arena_file(file);
	u64 seqno = 0;
	int rc;

	rc = arena_lock(af);
	if (rc)
		return rc;
	rc = arena_schedule_submit(af, schedule, flags, check, &seqno, NULL);
	mutex_unlock(&af->lock);
	if (!rc)
		*seqno_out = seqno;
	return rc;
}

static int arena_ioctl_schedule_submit(struct drm_device *drm, void *data,
				       struct drm_file *file)
{
	struct drm_arena_schedule_submit *arg = data;
	static const struct arena_seal_check unsealed;

	return arena_submit_locked(file, arg->schedule, arg->flags, &unsealed,
				   &arg->seqno);
}

static int arena_ioctl_schedule_submit_sealed(struct drm_device *drm,
					      void *data,
					      struct drm_file *file)
{
	struct drm_arena_schedule_submit_sealed *arg = data;
	struct arena_seal_check check = {
		.sealed = true, .algorithm = arg->algorithm, .pad = arg->pad,
	};

	memcpy(check.seal, arg->seal, sizeof(check.seal));
	return arena_submit_locked(file, arg->schedule, arg->flags, &check,
				   &arg->seqno);
}

/* contract/requests.inc's rows: request NAME is handled by arena_ioctl_name */
static const struct drm_ioctl_desc arena_ioctls[] = {
#define ARENA_REQUEST(name, NAME, ...)	\
	DRM_IOCTL_DEF_DRV(ARENA_##NAME, arena_ioctl_##name, 0),
#include "../contract/requests.inc"
};

static const struct file_operations arena_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.uring_cmd = arena_uring_cmd,
};

static const struct drm_driver arena_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL,
	.open = arena_open,
	.postclose = arena_postclose,
	.ioctls = arena_ioctls,
	.num_ioctls = ARRAY_SIZE(arena_ioctls),
	.fops = &arena_fops,
	.name = "arena",
	.desc = "arena accelerator",
	.date = "0",
	.major = 1,
	.minor = 0,
};

static int arena_probe(struct platform_device *pdev)
{
	struct arena_device *adev;
	int rc;

	adev = devm_drm_dev_alloc(&pdev->dev, &arena_driver,
				  struct arena_device, drm);
	if (IS_ERR(adev))
		return PTR_ERR(adev);
	platform_set_drvdata(pdev, adev);
	rc = drm_dev_register(&adev->drm, 0);
	if (rc)
		return rc;
	drm_info(&adev->drm, "arena accelerator (require_seal=%d poison=%d)\n",
		 arena_require_seal, arena_poison);
	return 0;
}

static void arena_remove(struct platform_device *pdev)
{
	struct arena_device *adev = platform_get_drvdata(pdev);

	drm_dev_unplug(&adev->drm);
}

static struct platform_driver arena_platform_driver = {
	.probe = arena_probe,
	.remove = arena_remove,
	.driver = {
		.name = "arena",
	},
};

static int __init arena_init(void)
{
	int rc = platform_driver_register(&arena_platform_driver);

	if (rc)
		return rc;
	arena_pdev = platform_device_register_simple("arena", -1, NULL, 0);
	if (IS_ERR(arena_pdev)) {
		platform_driver_unregister(&arena_platform_driver);
		return PTR_ERR(arena_pdev);
	}
	return 0;
}

static void __exit arena_exit(void)
{
	platform_device_unregister(arena_pdev);
	platform_driver_unregister(&arena_platform_driver);
}

module_init(arena_init);
module_exit(arena_exit);

MODULE_DESCRIPTION("arena accelerator (arenaguard's reference driver)");
MODULE_LICENSE("Dual MIT/GPL");
