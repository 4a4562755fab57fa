export { groupCommit, type BatchFn } from './group-commit';
