// The layout worker's bundled source, provided by a plugin in js/build.mjs.
declare module "pvw:layout-worker" {
  const source: string;
  export default source;
}
