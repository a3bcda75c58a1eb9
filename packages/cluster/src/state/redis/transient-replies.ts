/**
 * Server replies that mean "not now" rather than "never": loading, failover, cluster resharding.
 * They map to StateUnavailableError, so callers retry them like a lost connection; the
 * durability check does not take them for a refusal of CONFIG.
 */
export const TRANSIENT_REPLIES =
  /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS)/;

/**
 * Replies that refuse a write before any of it runs, though they may pass: READONLY from a
 * replica (a primary demoted by a failover, a url naming a replica) and NOREPLICAS (fewer
 * replicas than the server's min-replicas-to-write). A write or clear refused with one wrote
 * nothing, so it is StateWriteRefusedError rather than an unknown outcome; for reads and the
 * open check they stay transient.
 */
export const WRITE_REFUSED_REPLIES = /^(READONLY|NOREPLICAS)/;
