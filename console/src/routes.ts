import { type ComponentType, type LazyExoticComponent, lazy } from "react";
import { preloadServices } from "wharf/sdk";
import type { RouteParams } from "./lib/route-params";

/** One page of the console: its path pattern (see `matchPath`) and its lazily loaded component. */
export interface RouteDef {
  pattern: string;
  page: LazyExoticComponent<ComponentType<RouteParams>>;
}

/** One entry of the header's navigation. */
export interface NavEntry {
  label: string;
  to: string;
  /** Path prefixes that mark the entry as current. */
  prefixes: string[];
}

/**
 * Every page, most specific first (the first match wins). Each page is its own chunk, loaded when
 * first shown, so the initial JavaScript holds only the shell.
 */
export const ROUTES: RouteDef[] = [
  { pattern: "/", page: lazy(() => import("./pages/home-page")) },
  { pattern: "/orgs", page: lazy(() => import("./pages/orgs-page")) },
  { pattern: "/groups/*", page: lazy(() => import("./pages/group-page")) },
  {
    pattern: "/repos/*",
    page: lazy(() => {
      // The page's first calls are to these domains: their descriptors load alongside its chunk.
      preloadServices("registry", "iam");
      return import("./pages/repo-page");
    }),
  },
  { pattern: "/images/:digest/*", page: lazy(() => import("./pages/image-page")) },
  { pattern: "/advisories", page: lazy(() => import("./pages/advisories-page")) },
  { pattern: "/libraries", page: lazy(() => import("./pages/libraries-page")) },
  { pattern: "/access/*", page: lazy(() => import("./pages/access/access-page")) },
  { pattern: "/webhooks/deliveries/*", page: lazy(() => import("./pages/webhooks/deliveries-page")) },
  { pattern: "/webhooks/*", page: lazy(() => import("./pages/webhooks/webhooks-page")) },
  { pattern: "/governance/*", page: lazy(() => import("./pages/governance/governance-page")) },
  { pattern: "/mirroring/replication/*", page: lazy(() => import("./pages/mirroring/replication-page")) },
  { pattern: "/mirroring/upstreams/*", page: lazy(() => import("./pages/mirroring/upstreams-page")) },
  { pattern: "/mirroring", page: lazy(() => import("./pages/mirroring/upstreams-page")) },
  { pattern: "/supply-chain/policies/*", page: lazy(() => import("./pages/supply-chain/policies-page")) },
  { pattern: "/supply-chain/keys/*", page: lazy(() => import("./pages/supply-chain/signing-keys-page")) },
  { pattern: "/supply-chain", page: lazy(() => import("./pages/supply-chain/signing-keys-page")) },
  { pattern: "/dashboard/*", page: lazy(() => import("./pages/dashboard/dashboard-page")) },
];

/** The header's navigation. */
export const NAV: NavEntry[] = [
  { label: "Home", to: "/", prefixes: [] },
  { label: "Organizations", to: "/orgs", prefixes: ["/groups/", "/repos/", "/images/", "/dashboard/"] },
  { label: "Advisories", to: "/advisories", prefixes: [] },
  { label: "Libraries", to: "/libraries", prefixes: [] },
  { label: "Access", to: "/access", prefixes: ["/access/"] },
  { label: "Webhooks", to: "/webhooks", prefixes: ["/webhooks/"] },
  { label: "Governance", to: "/governance", prefixes: ["/governance/"] },
  { label: "Mirroring", to: "/mirroring/upstreams", prefixes: ["/mirroring"] },
  { label: "Supply chain", to: "/supply-chain/keys", prefixes: ["/supply-chain"] },
];

/** Shown when no route matches. */
export const NOT_FOUND = lazy(() => import("./pages/not-found-page"));
