import type { ApiClient } from '../../../shared/client/api-client.js';
import type { ComputerDownload } from '../../../shared/computers.js';
import {
  RECORDING_FILES,
  type Recording,
  type RecordingFile,
  type RecordingFileKey,
} from '../../../shared/recordings.js';
import { useApi } from '../api/api-context.js';
import { AsyncButton } from '../components/async-button.js';
import { href } from '../hooks/use-hash-route.js';
import { fileSize, saveFile } from './files.js';

const FILE_ROUTES = {
  video: 'recordings.video',
  events: 'recordings.events',
  har: 'recordings.har',
  trace: 'recordings.trace',
} as const satisfies Record<RecordingFileKey, string>;

const keyOf = (file: RecordingFile) =>
  (Object.keys(RECORDING_FILES) as RecordingFileKey[]).find(
    (key) => RECORDING_FILES[key].name === file.name,
  );

type ErrorProps = { onError: (message: string | undefined) => void };

/** A recording's files and the bundles of the tasks that ran on its computer, to download. */
export function RecordingDownloads({ recording, onError }: { recording: Recording } & ErrorProps) {
  const api = useApi();
  const id = recording.computer_id;
  const download = async (key: RecordingFileKey, file: RecordingFile) => {
    const bytes = await api.call(FILE_ROUTES[key], { params: { id } });
    saveFile(bytes, `${id}-${file.name}`, file.content_type);
  };
  return (
    <div className="downloads">
      <div className="download-group" role="group" aria-label="Files">
        <span className="download-label">Files</span>
        {recording.files.length === 0 && <span className="muted">none</span>}
        {recording.files.map((file) => {
          const key = keyOf(file);
          return (
            key && (
              <AsyncButton
                key={file.name}
                className="secondary"
                aria-label={`Download ${file.name}`}
                onClick={() => download(key, file)}
                onError={onError}
              >
                {file.name} <span className="muted">{fileSize(file.size_bytes)}</span>
              </AsyncButton>
            )
          );
        })}
      </div>
      <SavedDownloads
        computerId={id}
        files={recording.downloads}
        title="What the computer downloaded, kept with its recording"
        onError={onError}
      />
      {recording.task_ids.length > 0 && (
        <div className="download-group" role="group" aria-label="Task bundles">
          <span className="download-label">Task bundles</span>
          {recording.task_ids.map((taskId) => (
            <span key={taskId} className="bundle">
              <a href={href.task(taskId)}>{taskId}</a>
              <BundleButton taskId={taskId} onError={onError} />
            </span>
          ))}
        </div>
      )}
    </div>
  );
}

/**
 * The files a computer's browser downloaded, each saved here with a click; nothing when there are
 * none.
 */
export function SavedDownloads({
  computerId,
  files,
  title,
  className,
  onError,
}: {
  computerId: string;
  files: ComputerDownload[];
  title: string;
  className?: string;
} & ErrorProps) {
  const api = useApi();
  if (files.length === 0) return null;
  const save = async (name: string) => {
    const bytes = await api.call('computers.download', { params: { id: computerId, name } });
    saveFile(bytes, name, 'application/octet-stream');
  };
  return (
    <div
      className={className ? `download-group ${className}` : 'download-group'}
      role="group"
      aria-label="Downloads"
    >
      <span className="download-label" title={title}>
        Downloads
      </span>
      {files.map((file) => (
        <AsyncButton
          key={file.name}
          className="secondary"
          aria-label={`Save ${file.name}`}
          onClick={() => save(file.name)}
          onError={onError}
        >
          {file.name} <span className="muted">{fileSize(file.size_bytes)}</span>
        </AsyncButton>
      ))}
    </div>
  );
}

/** The task's offline bundle (a zip with a viewer, its events, model calls, video, HAR, trace). */
export function BundleButton({
  taskId,
  onError,
  label,
}: { taskId: string; label?: string } & ErrorProps) {
  const api = useApi();
  return (
    <AsyncButton
      className="secondary"
      aria-label={`Download the bundle of ${taskId}`}
      title="One zip to review the task offline: a viewer, its events, model calls, video, HAR and trace"
      onClick={() => downloadBundle(api, taskId)}
      onError={onError}
    >
      {label ?? 'bundle.zip'}
    </AsyncButton>
  );
}

async function downloadBundle(api: ApiClient, taskId: string): Promise<void> {
  const bytes = await api.call('tasks.bundle', { params: { id: taskId } });
  saveFile(bytes, `${taskId}-bundle.zip`, 'application/zip');
}
