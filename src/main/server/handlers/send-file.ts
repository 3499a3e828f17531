import type { Response } from 'express';

/**
 * Sends a file (Range requests answered, so a video can seek) and resolves once it is sent;
 * `download` names it as an attachment. The path is Benchtop's own, under the data dir, which is
 * often inside a dot folder (~/.config/benchtop): Express would answer 404 for such a path by
 * default.
 */
export function sendFile(res: Response, path: string, contentType: string, download?: string) {
  return new Promise<void>((resolve, reject) => {
    if (download) res.attachment(download);
    res.sendFile(
      path,
      { headers: { 'content-type': contentType }, cacheControl: false, dotfiles: 'allow' },
      (error) => {
        // A client that went away mid-file is not an error of ours.
        if (error && !res.headersSent) reject(error);
        else resolve();
      },
    );
  });
}
