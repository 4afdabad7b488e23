import { Ecosystem } from "../gen/platform/libraries/v2/artifacts_pb.js";
import type { LibraryEcosystemName } from "../storage/library-store.js";

/** Every ecosystem of the catalogue, in enum order. */
export const LIBRARY_ECOSYSTEMS: readonly LibraryEcosystemName[] = ["JAVA", "PYTHON", "JAVASCRIPT"];

const TO_ENUM: Record<LibraryEcosystemName, Ecosystem> = {
  JAVA: Ecosystem.JAVA,
  PYTHON: Ecosystem.PYTHON,
  JAVASCRIPT: Ecosystem.JAVASCRIPT,
};

/** The API enum value of a stored ecosystem. */
export function ecosystemEnum(name: LibraryEcosystemName): Ecosystem {
  return TO_ENUM[name];
}

/** The stored ecosystem of an API enum value; undefined for UNSPECIFIED and unknown numbers. */
export function ecosystemOfEnum(value: Ecosystem): LibraryEcosystemName | undefined {
  return LIBRARY_ECOSYSTEMS.find((name) => TO_ENUM[name] === value);
}

/**
 * The ecosystem `text` names: the enum name (`ECOSYSTEM_PYTHON`) or its short form in any case
 * (`PYTHON`, `python`); undefined for anything else (UNSPECIFIED included).
 */
export function parseEcosystem(text: string): LibraryEcosystemName | undefined {
  const upper = text.trim().toUpperCase();
  const short = upper.startsWith("ECOSYSTEM_") ? upper.slice("ECOSYSTEM_".length) : upper;
  return LIBRARY_ECOSYSTEMS.find((name) => name === short);
}
