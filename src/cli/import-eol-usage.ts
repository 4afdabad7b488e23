// Kept apart from import-eol.ts so that printing the usage of `wharf import` loads none of the importer.

/** Usage of `wharf import eol` (a kind of `wharf import`). */
export const IMPORT_EOL_USAGE = `  wharf import eol --product NAME --match ORG/REPO:TAGGLOB… FILE.json [--strict] [options]
                                        end-of-life dates of a product's release cycles
                                        (endoflife.date JSON: legacy array or API v1 {result:
                                        {releases}}); each --match (repeatable) makes the repo's
                                        tags matching TAGGLOB (* and ?) follow the product
                                        (ListEolTags, v2 deprecated)
`;
