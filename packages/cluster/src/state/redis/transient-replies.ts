/**
 * Server replies that mean "not now" rather than "never": loading, failover, cluster resharding.
 * They map to StateUnavailableError, so callers retry them like a lost connection; the
 * durability check does not take them for a refusal of CONFIG.
 */
export const TRANSIENT_REPLIES =
  /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS)/;
