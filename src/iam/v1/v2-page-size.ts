/** The page size a v1 list asks the v2 list for while gathering every page (the v2 maximum). */
export const V2_PAGE_SIZE = 200;
