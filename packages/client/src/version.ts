// Written by scripts/build.js from package.json's "version"; change the version there, not here.
export const SDK_VERSION = '0.1.0';
